/* test_settings.c — every engine's params-to-settings step (it does no
 * I/O) fed every value lib/params.h accepts at the edges: the min and max
 * of every numeric param, every choice, both booleans, a list of one
 * entry and of all, the word "per-vcpu" on machines of 1, 7 and 4096
 * CPUs, strings at their shortest and longest.
 *
 * A value lib accepts must give settings that say exactly that value (the
 * built-in engines' settings structs; the tools' argv); a value lib
 * refuses must be refused by the step too, with lib's message. So a plan
 * the server accepts cannot fail on a worker for its params, and a limit
 * lives in one place: the plan of the defect this guards against,
 * {"threads": 256, "qd": 1024, "block": "64m"}, passed the server and
 * failed every job. */
#include "check.h"
#include "params.h"
#include "worker/engines/cpu.h"
#include "worker/engines/disk.h"
#include "worker/engines/engine.h"
#include "worker/engines/net.h"
#include "worker/engines/tools.h"

#include <math.h>

/* The CPUs a worker may have: one, some, more than any count allows. */
static const long cpu_counts[] = {1, 7, 4096};

/* What an engine's step made of params on a machine with cpus CPUs, as a
 * JSON object; NULL with err set when the step refused them. */
typedef json_t *(*render_fn)(const struct hv_engine *e, const json_t *params, long cpus, char *err,
                             size_t len);

/* Checks that got (render's object) says param is value (normalised by
 * lib) on a machine with cpus CPUs; what names the case. */
typedef void (*expect_fn)(const struct hv_engine *e, const char *param, const json_t *value,
                          long cpus, const json_t *got, const char *what);

/* ---------------------------------------------------------------------
 * The built-in engines: their settings structs as JSON, in the params'
 * names and units. */

static json_t *render_cpu(const struct hv_engine *e, const json_t *params, long cpus, char *err,
                          size_t len)
{
    struct hv_cpu_settings s;
    if (hv_cpu_settings(params, cpus, &s, err, len) != 0)
        return NULL;
    return json_pack("{s:I, s:f, s:b}", "copies", (json_int_t)s.copies, "seconds", s.seconds, "pin",
                     s.pin);
}

static json_t *render_disk(const struct hv_engine *e, const json_t *params, long cpus, char *err,
                           size_t len)
{
    static struct hv_disk_settings s; /* PATH_MAX inside: not on the stack */
    if (hv_disk_settings(params, cpus, &s, err, len) != 0)
        return NULL;
    const struct hv_param_def *ops = hv_engine_def_param(e->def, "ops");
    const struct hv_param_def *sync = hv_engine_def_param(e->def, "sync");
    json_t *list = json_array();
    for (size_t i = 0; i < s.n_ops; i++)
        json_array_append_new(list, json_string(ops->choices[s.ops[i]]));
    json_t *o = json_pack("{s:o, s:I, s:I, s:b, s:s, s:I, s:I, s:b, s:f}", "ops", list, "block",
                          (json_int_t)s.block, "size", (json_int_t)s.size, "direct", s.direct,
                          "sync", sync->choices[s.sync], "qd", (json_int_t)s.qd, "threads",
                          (json_int_t)s.threads, "drop_caches", s.drop_caches, "warmup", s.warmup);
    if (s.path[0] != '\0')
        json_object_set_new(o, "path", json_string(s.path));
    if (s.seconds > 0)
        json_object_set_new(o, "seconds", json_real(s.seconds));
    return o;
}

static json_t *render_net(const struct hv_engine *e, const json_t *params, long cpus, char *err,
                          size_t len)
{
    struct hv_net_settings s;
    if (hv_net_settings(params, cpus, &s, err, len) != 0)
        return NULL;
    json_t *o = json_pack("{s:s, s:I, s:f, s:f, s:I, s:b}", "mode", hv_net_mode_name(s.mode),
                          "streams", (json_int_t)s.streams, "seconds", s.seconds, "warmup",
                          s.warmup, "msg_size", (json_int_t)s.msg_size, "reverse", s.reverse);
    if (s.window > 0)
        json_object_set_new(o, "window", json_integer((json_int_t)s.window));
    return o;
}

/* A site benchmark's step is the check and the name it looks up. */
static json_t *render_custom(const struct hv_engine *e, const json_t *params, long cpus, char *err,
                             size_t len)
{
    json_t *p = hv_engine_params_check(e->def, params, cpus, err, len);
    json_t *o = p ? json_pack("{s:s}", "name", hv_params_str(p, "name")) : NULL;
    json_decref(p);
    return o;
}

/* The value a setting must have for param = value: a "per-vcpu" count
 * resolved, a disk size cut to whole blocks. New reference. */
static json_t *expected(const struct hv_engine *e, const char *param, const json_t *value,
                        long cpus, const json_t *got)
{
    const struct hv_param_def *row = hv_engine_def_param(e->def, param);
    if (row->word != NULL && json_is_string(value)) {
        long lo = row->min < 1 ? 1 : (long)row->min, hi = (long)row->max;
        return json_integer(cpus < lo ? lo : cpus > hi ? hi : cpus);
    }
    if (e->def == &hv_engine_def_disk_builtin && strcmp(param, "size") == 0) {
        json_int_t size = json_integer_value(value);
        return json_integer(size - size % json_integer_value(json_object_get(got, "block")));
    }
    return json_incref((json_t *)value);
}

static void expect_builtin(const struct hv_engine *e, const char *param, const json_t *value,
                           long cpus, const json_t *got, const char *what)
{
    if (strcmp(param, "peer") == 0)
        return; /* where the server side runs: the server places it */
    json_t *want = expected(e, param, value, cpus, got);
    const json_t *have = json_object_get(got, param);
    bool same = json_is_number(want) && json_is_number(have)
                    ? fabs(json_number_value(want) - json_number_value(have)) < 1e-9
                    : json_equal(want, have);
    char *w = json_dumps(want, JSON_ENCODE_ANY), *h = json_dumps(have, JSON_ENCODE_ANY);
    CHECK_MSG(same, "%s: the settings say %s = %s, not %s", what, param, h ? h : "(absent)", w);
    free(w);
    free(h);
    json_decref(want);
}

/* ---------------------------------------------------------------------
 * The external tools: the argv their argv step builds. */

#define TARGET "/scratch/hvbench-test.dat"

static json_t *render_tool(const struct hv_engine *e, const json_t *params, long cpus, char *err,
                           size_t len)
{
    struct hv_tool_job j = {.engine = e, .tool = e->tool, .cpus = cpus, .port = 5201};
    j.params = hv_engine_params_check(e->def, params, cpus, err, len);
    if (j.params == NULL)
        return NULL;
    snprintf(j.target, sizeof j.target, TARGET);
    snprintf(j.host, sizeof j.host, "peer.example");
    snprintf(j.outfile, sizeof j.outfile, "/scratch/report.yaml");
    json_t *o = NULL;
    if (e->tool->argv(&j) == 0 && !j.args.broken) {
        o = json_pack("{s:o, s:f, s:f}", "argv", hv_tool_argv_json((const char *const *)j.args.v),
                      "timeout", j.timeout, "warmup", j.warmup);
        hv_tool_args_free(&j.args);
        if (e->tool->server_argv != NULL && e->tool->server_argv(&j, 5202) == 0)
            json_object_set_new(o, "server_argv", hv_tool_argv_json((const char *const *)j.args.v));
    } else {
        snprintf(err, len, "argv: %s", j.args.broken ? "too long" : "refused");
    }
    hv_tool_args_free(&j.args);
    json_decref(j.params);
    return o;
}

/* Whether list (of strings) holds a, followed by b when b is not NULL. */
static bool has(const json_t *list, const char *a, const char *b)
{
    for (size_t i = 0; i < json_array_size(list); i++)
        if (strcmp(json_string_value(json_array_get(list, i)), a) == 0 &&
            (b == NULL || (i + 1 < json_array_size(list) &&
                           strcmp(json_string_value(json_array_get(list, i + 1)), b) == 0)))
            return true;
    return false;
}

/* Whether an element of list starts with prefix. */
static bool has_prefix(const json_t *list, const char *prefix)
{
    for (size_t i = 0; i < json_array_size(list); i++)
        if (strncmp(json_string_value(json_array_get(list, i)), prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

/* Checks that argv holds a (then b), or, when want is false, no a. */
static void want_args(const json_t *argv, bool want, const char *a, const char *b, const char *what,
                      const char *param)
{
    char *text = json_dumps(argv, JSON_COMPACT);
    CHECK_MSG(has(argv, a, b) == want, "%s: %s: argv %s %s %s%s%s", what, param, text,
              want ? "lacks" : "holds", a, b ? " " : "", b ? b : "");
    free(text);
}

static long long ceil_ll(double v)
{
    return (long long)ceil(v - 1e-9);
}

static void expect_fio(const char *param, const json_t *v, const json_t *argv, const char *what)
{
    char a[128];
    a[0] = '\0';
    if (json_is_string(v) && strcmp(param, "path") != 0)
        snprintf(a, sizeof a, "--%s=%s", param, json_string_value(v));
    else if (json_is_boolean(v))
        snprintf(a, sizeof a, "--%s=%d", param, json_is_true(v));
    else if (json_is_integer(v))
        snprintf(a, sizeof a, "--%s=%lld", param, (long long)json_integer_value(v));
    if (strcmp(param, "runtime") == 0)
        snprintf(a, sizeof a, "--runtime=%lldms", (long long)llround(json_number_value(v) * 1000));
    if (strcmp(param, "path") == 0)
        snprintf(a, sizeof a, "--filename=%s", TARGET);
    if (strcmp(param, "warmup") == 0) {
        bool any = json_number_value(v) > 0;
        snprintf(a, sizeof a, "--ramp_time=%lldms",
                 (long long)llround(json_number_value(v) * 1000));
        CHECK_MSG(has_prefix(argv, "--ramp_time=") == any, "%s: warmup %g", what,
                  json_number_value(v));
        if (!any)
            return;
    }
    want_args(argv, true, a, NULL, what, param);
}

static void expect_sysbench(const struct hv_engine *e, const char *param, const json_t *v,
                            long cpus, const json_t *argv, const char *what)
{
    char a[128];
    double n = json_number_value(v);
    if (strcmp(param, "test") == 0) {
        want_args(argv, true, json_string_value(v), NULL, what, param);
        return;
    }
    if (strcmp(param, "threads") == 0) {
        json_t *want = expected(e, param, v, cpus, NULL);
        snprintf(a, sizeof a, "--threads=%lld", (long long)json_integer_value(want));
        json_decref(want);
    } else if (strcmp(param, "seconds") == 0) {
        snprintf(a, sizeof a, "--time=%lld", 2 + ceil_ll(n)); /* warmup 2 by default */
    } else if (strcmp(param, "max_prime") == 0) {
        snprintf(a, sizeof a, "--cpu-max-prime=%lld", (long long)json_integer_value(v));
    } else {
        snprintf(a, sizeof a, "--time=%lld", ceil_ll(n) + 10); /* warmup; seconds 10 */
        CHECK_MSG(has_prefix(argv, "--report-checkpoints=") == (n > 0), "%s: warmup %g", what, n);
    }
    want_args(argv, true, a, NULL, what, param);
}

static void expect_stress_ng(const struct hv_engine *e, const char *param, const json_t *v,
                             long cpus, const json_t *argv, const char *what)
{
    char a[128], b[64];
    if (strcmp(param, "stressor") == 0) {
        snprintf(a, sizeof a, "--%s", json_string_value(v));
        want_args(argv, true, a, NULL, what, param);
    } else if (strcmp(param, "workers") == 0) {
        json_t *want = expected(e, param, v, cpus, NULL);
        snprintf(b, sizeof b, "%lld", (long long)json_integer_value(want));
        json_decref(want);
        want_args(argv, true, "--cpu", b, what, param);
    } else {
        snprintf(b, sizeof b, "%llds", ceil_ll(json_number_value(v)));
        want_args(argv, true, "--timeout", b, what, param);
    }
}

static void expect_bonnie(const char *param, const json_t *v, const json_t *argv, const char *what)
{
    char b[64];
    if (strcmp(param, "size") == 0) {
        snprintf(b, sizeof b, "%lld", (long long)(json_integer_value(v) / 1048576));
        want_args(argv, true, "-s", b, what, param);
    } else if (strcmp(param, "ram_mb") == 0) {
        snprintf(b, sizeof b, "%lld", (long long)json_integer_value(v));
        want_args(argv, true, "-r", b, what, param);
    } else if (strcmp(param, "path") == 0) {
        want_args(argv, true, "-d", TARGET, what, param);
    } else {
        want_args(argv, json_is_true(v), "-f", NULL, what, param);
    }
}

/* iperf3 and iperf 2, client and server. */
static void expect_iperf(bool iperf3, const char *param, const json_t *v, const json_t *got,
                         const char *what)
{
    const json_t *argv = json_object_get(got, "argv"), *srv = json_object_get(got, "server_argv");
    double n = json_number_value(v);
    char b[64];
    snprintf(b, sizeof b, "%lld", (long long)json_integer_value(v));
    want_args(argv, true, "-c", "peer.example", what, param);
    if (strcmp(param, "streams") == 0 || strcmp(param, "window") == 0) {
        const char *flag = param[0] == 's' ? "-P" : "-w";
        want_args(argv, true, flag, b, what, param);
        if (!iperf3)
            want_args(srv, true, flag, b, what, param); /* its server counts the streams */
    } else if (strcmp(param, "seconds") == 0 || strcmp(param, "warmup") == 0) {
        bool secs = param[0] == 's';
        if (iperf3)
            snprintf(b, sizeof b, "%lld", ceil_ll(secs ? n : 10));
        else /* iperf 2 runs warmup (whole seconds) + seconds */
            snprintf(b, sizeof b, "%g", secs ? 2 + n : (double)ceil_ll(n) + 10);
        want_args(argv, true, "-t", b, what, param);
        if (iperf3 && !secs) {
            snprintf(b, sizeof b, "%lld", ceil_ll(n));
            want_args(argv, n > 0, "--omit", n > 0 ? b : NULL, what, param);
        }
    } else if (strcmp(param, "reverse") == 0) {
        want_args(argv, json_is_true(v), "-R", NULL, what, param);
    } else if (strcmp(param, "udp") == 0) {
        want_args(argv, json_is_true(v), "-u", NULL, what, param);
    }
}

static void expect_tool(const struct hv_engine *e, const char *param, const json_t *value,
                        long cpus, const json_t *got, const char *what)
{
    const json_t *argv = json_object_get(got, "argv");
    const char *name = e->def->engine;
    if (strcmp(name, "fio") == 0)
        expect_fio(param, value, argv, what);
    else if (strcmp(name, "sysbench") == 0)
        expect_sysbench(e, param, value, cpus, argv, what);
    else if (strcmp(name, "stress-ng") == 0)
        expect_stress_ng(e, param, value, cpus, argv, what);
    else if (strcmp(name, "bonnie") == 0)
        expect_bonnie(param, value, argv, what);
    else
        expect_iperf(strcmp(name, "iperf3") == 0, param, value, got, what);
    CHECK_MSG(json_number_value(json_object_get(got, "timeout")) > 0, "%s: a timeout", what);
}

/* ---------------------------------------------------------------------
 * The walk. */

/* Each engine: what every case starts from, and its step. */
static const struct engine_case {
    const char *kind, *engine, *base;
    render_fn render;
    expect_fn expect;
} engines[] = {
    {"cpu", "builtin", "{}", render_cpu, expect_builtin},
    {"disk", "builtin", "{}", render_disk, expect_builtin},
    {"net", "builtin", "{\"peer\": \"host\"}", render_net, expect_builtin},
    {"disk", "fio", "{\"rw\": \"read\"}", render_tool, expect_tool},
    {"net", "iperf3", "{\"peer\": \"host\"}", render_tool, expect_tool},
    {"net", "iperf", "{\"peer\": \"host\"}", render_tool, expect_tool},
    {"cpu", "sysbench", "{}", render_tool, expect_tool},
    {"cpu", "stress-ng", "{}", render_tool, expect_tool},
    {"disk", "bonnie", "{}", render_tool, expect_tool},
    {"cpu", "custom", "{\"name\": \"a\"}", render_custom, expect_builtin},
    {"disk", "custom", "{\"name\": \"a\"}", render_custom, expect_builtin},
    {"net", "custom", "{\"name\": \"a\"}", render_custom, expect_builtin},
};

/* A value at an edge of a row needs another param to be accepted (a size
 * at its least needs a block no larger): engine, param, the companions. */
static const struct {
    const char *engine, *param, *with;
} companions[] = {
    {"disk/builtin", "size", "{\"block\": 512}"},
    {"disk/fio", "size", "{\"bs\": 512}"},
};

/* A string at its shortest and longest that the row's format accepts. */
static void string_edges(const struct hv_param_def *d, json_t *values)
{
    size_t max = d->max_len ? d->max_len : 256;
    char *s = malloc(max + 1);
    bool path = strcmp(d->name, "path") == 0;
    memset(s, path ? 'p' : 'a', max);
    s[0] = path ? '/' : 'a';
    s[max] = '\0';
    json_array_append_new(values, json_string(path ? "/" : "a"));
    json_array_append_new(values, json_string(s));
    free(s);
}

/* Every edge value of row d, as a plan may write it. */
static json_t *edges(const struct hv_param_def *d)
{
    json_t *values = json_array();
    switch (d->type) {
    case HV_PARAM_INT:
    case HV_PARAM_SIZE:
        json_array_append_new(values, json_integer((json_int_t)d->min));
        json_array_append_new(values, json_integer((json_int_t)d->max));
        if (d->word != NULL)
            json_array_append_new(values, json_string(d->word));
        break;
    case HV_PARAM_NUMBER:
    case HV_PARAM_DURATION:
        json_array_append_new(values, json_real(d->min));
        json_array_append_new(values, json_real(d->max));
        break;
    case HV_PARAM_BOOL:
        json_array_append_new(values, json_true());
        json_array_append_new(values, json_false());
        break;
    case HV_PARAM_ENUM:
        for (const char *const *c = d->choices; *c != NULL; c++)
            json_array_append_new(values, json_string(*c));
        break;
    case HV_PARAM_LIST: {
        json_t *all = json_array();
        for (const char *const *c = d->choices; *c != NULL; c++) {
            json_array_append_new(values, json_pack("[s]", *c));
            json_array_append_new(all, json_string(*c));
        }
        json_array_append_new(values, all);
        break;
    }
    case HV_PARAM_STRING:
    case HV_PARAM_TARGET:
        string_edges(d, values);
        break;
    }
    return values;
}

/* One case: base + {param: value} (+ companions) on cpus CPUs. */
static void one_case(const struct engine_case *c, const struct hv_engine *e, const char *param,
                     const json_t *value, long cpus, int *accepted)
{
    json_t *params = check_json(c->base);
    json_object_set(params, param, (json_t *)value);
    char name[64], what[512];
    snprintf(name, sizeof name, "%s/%s", c->kind, c->engine);
    for (size_t i = 0; i < sizeof companions / sizeof companions[0]; i++)
        if (strcmp(companions[i].engine, name) == 0 && strcmp(companions[i].param, param) == 0) {
            json_t *with = check_json(companions[i].with);
            json_object_update(params, with);
            json_decref(with);
        }
    char *text = json_dumps(params, JSON_COMPACT);
    snprintf(what, sizeof what, "%s %s on %ld CPUs", name, text, cpus);
    free(text);
    /* What the server decides: the rows, then the target's limits. */
    json_t *norm = json_deep_copy(params), *errors = json_array();
    struct hv_target_facts facts = {.cpus = cpus};
    bool ok = hv_engine_def_check(e->def, norm, "/params", errors) == 0 &&
              hv_engine_def_fit(e->def, norm, &facts, "/params", errors) == 0;
    char err[512] = "";
    json_t *got = c->render(e, params, cpus, err, sizeof err);
    if (ok) {
        CHECK_MSG(got != NULL, "%s: lib accepts it, the step refuses: %s", what, err);
        if (got != NULL)
            c->expect(e, param, json_object_get(norm, param), cpus, got, what);
        (*accepted)++;
    } else {
        const json_t *first = json_array_get(errors, 0);
        CHECK_MSG(got == NULL && strstr(err, json_string_value(json_object_get(first, "message"))),
                  "%s: lib refuses it (%s), the step says \"%s\"", what,
                  json_string_value(json_object_get(first, "message")), err);
    }
    json_decref(got);
    json_decref(norm);
    json_decref(errors);
    json_decref(params);
}

/* Every edge of every row of every engine, and that every row is fed. */
static void test_edges(void)
{
    printf("-- every edge value of every param of every engine\n");
    CHECK(sizeof engines / sizeof engines[0] == hv_engine_def_count());
    int accepted = 0;
    for (size_t i = 0; i < sizeof engines / sizeof engines[0]; i++) {
        const struct engine_case *c = &engines[i];
        const struct hv_engine *e = hv_engine_find(c->kind, c->engine);
        CHECK_MSG(e != NULL && e->def == hv_engine_def_find(c->kind, c->engine),
                  "%s/%s: the worker has the engine, keyed by lib's description", c->kind,
                  c->engine);
        if (e == NULL)
            continue;
        for (const struct hv_param_def *d = e->def->params_def; d->name != NULL; d++) {
            json_t *values = edges(d);
            size_t k;
            json_t *v;
            json_array_foreach(values, k, v)
            {
                for (size_t n = 0; n < sizeof cpu_counts / sizeof cpu_counts[0]; n++)
                    one_case(c, e, d->name, v, cpu_counts[n], &accepted);
            }
            json_decref(values);
        }
    }
    printf("   %d accepted cases, each asserted\n", accepted);
    CHECK(accepted > 400);
}

/* The plan of the defect: refused where the server checks, with the path
 * and the limit, and by the worker with the same message. */
static void test_buffers(void)
{
    printf("-- threads x qd x block\n");
    const char *plan = "{\"threads\": 256, \"qd\": 1024, \"block\": \"64m\"}";
    json_t *p = check_json(plan), *errors = json_array();
    CHECK(hv_engine_def_check(&hv_engine_def_disk_builtin, p, "/params", errors) == 1);
    const char *msg = json_string_value(json_object_get(json_array_get(errors, 0), "message"));
    CHECK_STR(json_string_value(json_object_get(json_array_get(errors, 0), "path")), "/params/qd");
    CHECK(msg != NULL && strstr(msg, "16777216 MiB of I/O buffers; at most 1024 MiB") != NULL);
    struct hv_disk_settings s;
    char err[512];
    CHECK(hv_disk_settings(p, 2, &s, err, sizeof err) != 0 && msg != NULL &&
          strstr(err, msg) != NULL && strstr(err, "/params/qd") != NULL);
    json_decref(p);
    json_decref(errors);

    /* "per-vcpu": the target decides. 64 MiB a thread fits 16 threads. */
    const char *per = "{\"threads\": \"per-vcpu\", \"qd\": 64, \"block\": \"1m\"}";
    long fits[] = {1, 16, 17, 256, 4096};
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++) {
        p = check_json(per);
        errors = json_array();
        struct hv_target_facts t = {.name = "g1", .cpus = fits[i]};
        CHECK(hv_engine_def_check(&hv_engine_def_disk_builtin, p, "/params", errors) == 0);
        int n = hv_engine_def_fit(&hv_engine_def_disk_builtin, p, &t, "/params", errors);
        long threads = fits[i] > 256 ? 256 : fits[i];
        CHECK_MSG(n == (threads > 16), "%ld CPUs: %d problem(s)", fits[i], n);
        if (n > 0) {
            char want[200];
            snprintf(want, sizeof want,
                     "\"per-vcpu\" is %ld threads on target g1 (%ld CPUs): threads x qd x block "
                     "is %ld MiB",
                     threads, fits[i], threads * 64);
            CHECK_STR(json_string_value(json_object_get(json_array_get(errors, 0), "path")),
                      "/params/threads");
            CHECK_MSG(
                strstr(json_string_value(json_object_get(json_array_get(errors, 0), "message")),
                       want) != NULL,
                "%s", want);
        }
        int rc = hv_disk_settings(p, fits[i], &s, err, sizeof err);
        CHECK_MSG((rc != 0) == (threads > 16) && (rc != 0 || s.threads == threads),
                  "the worker on %ld CPUs: rc %d, %s", fits[i], rc, err);
        CHECK_MSG(rc == 0 || strstr(err, "on this target") != NULL, "%s", err);
        json_decref(p);
        json_decref(errors);
    }
    /* Unknown CPUs (an unregistered target): nothing to say yet. */
    p = check_json(per);
    struct hv_target_facts unknown = {.name = "g2", .cpus = 0};
    errors = json_array();
    hv_engine_def_check(&hv_engine_def_disk_builtin, p, "/params", errors);
    CHECK(hv_engine_def_fit(&hv_engine_def_disk_builtin, p, &unknown, "/params", errors) == 0);
    json_decref(p);
    json_decref(errors);
}

int main(void)
{
    test_edges();
    test_buffers();
    return check_summary("test_settings");
}
