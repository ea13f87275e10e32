/* test_params.c — engine parameter tables: defaults, exact normalisation,
 * every refusal at its JSON path, the API's JSON built from the same rows,
 * and docs/catalog.md and the examples in step with the table. */
#include "params.h"

#include "check.h"

#include <glob.h>
#include <stdbool.h>
#include <stdlib.h>

#define BASE "/workloads/0/params"

/* Runs the engine's check on params text; returns the normalised params
 * (caller decrefs) and leaves the errors in *errors (caller decrefs). */
static json_t *run(const char *kind, const char *engine, const char *text, int *problems,
                   json_t **errors)
{
    const struct hv_engine_def *e = hv_engine_def_find(kind, engine);
    if (e == NULL) {
        fprintf(stderr, "no engine %s/%s\n", kind, engine);
        exit(99);
    }
    json_t *params = check_json(text);
    *errors = json_array();
    *problems = hv_engine_def_check(e, params, BASE, *errors);
    return params;
}

/* The error at path, or NULL. */
static const char *error_at(const json_t *errors, const char *path)
{
    size_t i;
    const json_t *e;
    json_array_foreach(errors, i, e)
    {
        if (strcmp(json_string_value(json_object_get(e, "path")), path) == 0)
            return json_string_value(json_object_get(e, "message"));
    }
    return NULL;
}

/* errors as compact JSON for a failure message; the text lives until the
 * next call. */
static const char *errors_text(const json_t *errors)
{
    static char buf[4096];
    size_t n = json_dumpb(errors, buf, sizeof buf - 1, JSON_COMPACT);
    if (n >= sizeof buf)
        snprintf(buf, sizeof buf, "(%zu errors, too long to show)", json_array_size(errors));
    else
        buf[n] = '\0';
    return buf;
}

/* The least each engine needs: its required params. */
static const struct {
    const char *kind, *engine, *params;
} minimal[] = {
    {"cpu", "builtin", "{}"},
    {"disk", "builtin", "{}"},
    {"net", "builtin", "{\"peer\": \"host\"}"},
    /* check lets a missing peer through: the plan refuses it with 422 */
    {"net", "builtin", "{}"},
    {"disk", "fio", "{\"rw\": \"randread\"}"},
    {"net", "iperf3", "{\"peer\": \"hv01\"}"},
    {"net", "iperf", "{\"peer\": \"host\"}"},
    {"cpu", "sysbench", "{}"},
    {"cpu", "stress-ng", "{}"},
    {"disk", "bonnie", "{}"},
    {"cpu", "custom", "{\"name\": \"hepspec06\"}"},
    {"disk", "custom", "{\"name\": \"site.iozone-v3\"}"},
    {"net", "custom", "{\"name\": \"netperf_rr\"}"},
};

/* Refusals: engine, params, the path the error must name and a piece of
 * its message. */
static const struct {
    const char *kind, *engine, *params, *path, *msg;
} bad[] = {
    /* cpu/builtin: what lib/plan.c's check_cpu_builtin refused. */
    {"cpu", "builtin", "{\"copies\": 0}", BASE "/copies", "between 1 and 1024, not 0"},
    {"cpu", "builtin", "{\"copies\": 1025}", BASE "/copies", "between 1 and 1024"},
    {"cpu", "builtin", "{\"copies\": \"all\"}", BASE "/copies", "or \"per-vcpu\", not string"},
    {"cpu", "builtin", "{\"copies\": 2.5}", BASE "/copies", "must be an integer"},
    {"cpu", "builtin", "{\"seconds\": \"1 week\"}", BASE "/seconds", "is not a duration"},
    {"cpu", "builtin", "{\"seconds\": 0.5}", BASE "/seconds", "between 1s and 24h, not 0.5s"},
    {"cpu", "builtin", "{\"seconds\": \"25h\"}", BASE "/seconds", "between 1s and 24h"},
    {"cpu", "builtin", "{\"seconds\": true}", BASE "/seconds", "number of seconds or a duration"},
    {"cpu", "builtin", "{\"pin\": \"yes\"}", BASE "/pin", "true or false, not string"},
    {"cpu", "builtin", "{\"turbo\": true}", BASE "/turbo",
     "is not a known parameter of cpu/builtin; known: copies, seconds, pin"},
    /* disk/builtin */
    {"disk", "builtin", "{\"ops\": \"seq-read\"}", BASE "/ops", "non-empty array"},
    {"disk", "builtin", "{\"ops\": []}", BASE "/ops", "non-empty array"},
    {"disk", "builtin", "{\"ops\": [\"seq-read\", \"trim\"]}", BASE "/ops",
     "entry 1 (\"trim\") must be one of: seq-write, rewrite"},
    {"disk", "builtin", "{\"ops\": [\"seq-read\", 7]}", BASE "/ops", "not integer"},
    {"disk", "builtin", "{\"ops\": [\"reread\", \"reread\"]}", BASE "/ops",
     "entry 1 repeats entry 0"},
    {"disk", "builtin", "{\"block\": \"256q\"}", BASE "/block", "is not a size"},
    {"disk", "builtin", "{\"block\": 256}", BASE "/block", "between 512 and 64m, not 256"},
    {"disk", "builtin", "{\"block\": \"128m\"}", BASE "/block", "between 512 and 64m"},
    {"disk", "builtin", "{\"block\": 1000}", BASE "/block", "multiple of 512 bytes"},
    {"disk", "builtin", "{\"block\": -4096}", BASE "/block", "between 512 and 64m"},
    {"disk", "builtin", "{\"block\": 4096.5}", BASE "/block", "whole number of bytes"},
    {"disk", "builtin", "{\"size\": \"17t\"}", BASE "/size", "between 512 and 16t"},
    {"disk", "builtin", "{\"block\": \"1m\", \"size\": \"512k\"}", BASE "/size",
     "at least block (1048576 bytes)"},
    {"disk", "builtin", "{\"sync\": \"dsync\"}", BASE "/sync", "one of: none, fsync, osync"},
    {"disk", "builtin", "{\"qd\": 0}", BASE "/qd", "between 1 and 1024"},
    {"disk", "builtin", "{\"qd\": [1, 32]}", BASE "/qd", "must be an integer"},
    {"disk", "builtin", "{\"threads\": 257}", BASE "/threads", "between 1 and 256"},
    {"disk", "builtin", "{\"path\": \"scratch/file\"}", BASE "/path", "absolute path"},
    {"disk", "builtin", "{\"path\": \"/srv/../etc/passwd\"}", BASE "/path", ".. components"},
    {"disk", "builtin", "{\"path\": \"\"}", BASE "/path", "must not be empty"},
    {"disk", "builtin", "{\"path\": 7}", BASE "/path", "must be a string, not integer"},
    {"disk", "builtin", "{\"warmup\": \"2h\"}", BASE "/warmup", "between 0s and 1h"},
    {"disk", "builtin", "{\"drop_caches\": 1}", BASE "/drop_caches", "true or false"},
    /* the I/O buffers every worker allocates: at most 1 GiB */
    {"disk", "builtin", "{\"threads\": 256, \"qd\": 1024, \"block\": \"64m\"}", BASE "/qd",
     "threads x qd x block is 16777216 MiB of I/O buffers; at most 1024 MiB"},
    {"disk", "builtin", "{\"threads\": \"per-vcpu\", \"qd\": 1024, \"block\": \"2m\"}", BASE "/qd",
     "2048 MiB of I/O buffers with a single thread"},
    /* net/builtin */
    {"net", "builtin", "{\"peer\": 3}", BASE "/peer", "must be a string"},
    {"net", "builtin", "{\"peer\": \"host\", \"mode\": \"udp\"}", BASE "/mode", "stream, rr"},
    {"net", "builtin", "{\"peer\": \"host\", \"streams\": 129}", BASE "/streams",
     "between 1 and 128"},
    {"net", "builtin", "{\"peer\": \"host\", \"window\": \"1k\"}", BASE "/window",
     "between 4k and 64m, not 1k"},
    {"net", "builtin", "{\"peer\": \"host\", \"seconds\": \"2h\"}", BASE "/seconds",
     "between 1s and 1h"},
    {"net", "builtin", "{\"peer\": \"host\", \"msg_size\": \"2m\"}", BASE "/msg_size",
     "between 1 and 1m"},
    {"net", "builtin", "{\"peer\": \"host\", \"cmd\": \"ls\"}", BASE "/cmd",
     "is not a known parameter of net/builtin"},
    {"net", "builtin", "{\"peer\": \"host\", \"mode\": \"rr\", \"reverse\": true}", BASE "/reverse",
     "applies to mode stream only (an rr transaction goes both ways)"},
    /* disk/fio */
    {"disk", "fio", "{}", BASE "/rw", "is required"},
    {"disk", "fio", "{\"rw\": \"randrw\", \"ioengine\": \"posixaio\"}", BASE "/ioengine",
     "libaio, io_uring, psync, sync"},
    {"disk", "fio", "{\"rw\": \"read\", \"bs\": \"1m\", \"size\": \"64k\"}", BASE "/size",
     "at least bs"},
    {"disk", "fio", "{\"rw\": \"read\", \"runtime\": \"-5s\"}", BASE "/runtime",
     "is not a duration"},
    {"disk", "fio", "{\"rw\": \"read\", \"numjobs\": 0}", BASE "/numjobs", "between 1 and 256"},
    /* net/iperf3, net/iperf */
    {"net", "iperf3", "{\"peer\": \"host\", \"udp\": \"yes\"}", BASE "/udp", "true or false"},
    {"net", "iperf", "{\"peer\": \"host\", \"reverse\": true}", BASE "/reverse",
     "known: peer, streams, window, seconds"},
    /* cpu/sysbench, cpu/stress-ng */
    {"cpu", "sysbench", "{\"test\": \"fileio\"}", BASE "/test", "one of: cpu, memory"},
    {"cpu", "sysbench", "{\"max_prime\": 2}", BASE "/max_prime", "between 3 and 100000000"},
    {"cpu", "stress-ng", "{\"stressor\": \"fork\"}", BASE "/stressor", "cpu, matrix, vm"},
    {"cpu", "stress-ng", "{\"workers\": -1}", BASE "/workers", "between 0 and 1024"},
    /* disk/bonnie */
    {"disk", "bonnie", "{\"size\": \"500k\"}", BASE "/size", "between 1m and 16t"},
    {"disk", "bonnie", "{\"size\": \"1500k\"}", BASE "/size", "multiple of 1m (1048576 bytes)"},
    {"disk", "bonnie", "{\"size\": \"2g\", \"ram_mb\": 2048}", BASE "/size",
     "at least twice ram_mb (4096 MiB)"},
    /* custom: only a declared name, never a command. */
    {"cpu", "custom", "{}", BASE "/name", "is required"},
    {"cpu", "custom", "{\"name\": \"hepspec\", \"args\": [\"-n\", \"8\"]}", BASE "/args",
     "is not a known parameter of cpu/custom; known: name"},
    {"disk", "custom", "{\"name\": \"../../bin/sh\"}", BASE "/name", "a-z, 0-9"},
    {"net", "custom", "{\"name\": \"..\"}", BASE "/name", "not start with '.'"},
    {"net", "custom", "{\"name\": \"Netperf\"}", BASE "/name", "a-z, 0-9"},
    {"cpu", "custom", "{\"name\": \"rm -rf /\"}", BASE "/name", "a-z, 0-9"},
};

/* Params as the engines normalise them: the given params, then members
 * the normalised params must hold. */
static const struct {
    const char *kind, *engine, *params, *want;
} normalised[] = {
    /* cpu/builtin normalises as lib/plan.c always did. */
    {"cpu", "builtin", "{}", "{\"copies\": 1, \"seconds\": 10.0, \"pin\": false}"},
    {"cpu", "builtin", "{\"copies\": \"per-vcpu\", \"seconds\": \"2m\", \"pin\": true}",
     "{\"copies\": \"per-vcpu\", \"seconds\": 120.0, \"pin\": true}"},
    {"cpu", "builtin", "{\"seconds\": 5}", "{\"seconds\": 5.0}"},
    /* disk/builtin: the KVM tuning study's iozone options, exactly; ops
     * come back in the catalogue's order. */
    {"disk", "builtin",
     "{\"ops\": [\"rand-write\", \"seq-write\", \"rand-read\", \"reread\", \"rewrite\", "
     "\"seq-read\"], \"block\": \"256k\", \"size\": \"8g\", \"direct\": true, \"sync\": "
     "\"osync\", \"path\": \"/usr/vice/cache/iozone.dat\", \"threads\": \"per-vcpu\"}",
     "{\"block\": 262144, \"size\": 8589934592, \"sync\": \"osync\", \"threads\": \"per-vcpu\", "
     "\"path\": \"/usr/vice/cache/iozone.dat\", \"ops\": [\"seq-write\", \"rewrite\", "
     "\"seq-read\", \"reread\", \"rand-read\", \"rand-write\"], \"seconds\": null, "
     "\"warmup\": 0.0, \"qd\": 1}"},
    {"disk", "builtin",
     "{\"ops\": [\"rand-read\", \"seq-write\"], \"block\": 4096, \"size\": \"1.5m\", "
     "\"seconds\": \"90s\"}",
     "{\"ops\": [\"seq-write\", \"rand-read\"], \"block\": 4096, \"size\": 1572864, "
     "\"seconds\": 90.0}"},
    /* size equal to block is allowed */
    {"disk", "builtin", "{\"block\": \"64KiB\", \"size\": 65536}", "{\"block\": 65536}"},
    /* net/builtin: the KVM tuning study's iperf options. */
    {"net", "builtin", "{\"peer\": \"host\", \"window\": \"256k\", \"seconds\": 60}",
     "{\"peer\": \"host\", \"window\": 262144, \"seconds\": 60.0, \"warmup\": 2.0, "
     "\"msg_size\": 131072, \"streams\": 1, \"mode\": \"stream\", \"reverse\": false}"},
    /* without window, the system's autotuning: no default is filled */
    {"net", "iperf3", "{\"peer\": \"hv01\", \"streams\": 8}",
     "{\"window\": null, \"streams\": 8, \"udp\": false}"},
    /* disk/fio and disk/bonnie */
    {"disk", "fio", "{\"rw\": \"randread\", \"bs\": \"4k\", \"runtime\": \"1m\"}",
     "{\"bs\": 4096, \"size\": 1073741824, \"runtime\": 60.0, \"ioengine\": \"libaio\", "
     "\"direct\": true}"},
    {"disk", "bonnie", "{\"size\": \"8g\", \"ram_mb\": 4096, \"fast\": true}",
     "{\"size\": 8589934592, \"ram_mb\": 4096}"},
    {"disk", "bonnie", "{}", "{\"size\": null, \"ram_mb\": null}"},
    /* cpu/sysbench, cpu/stress-ng */
    {"cpu", "sysbench", "{\"threads\": \"per-vcpu\"}", "{\"max_prime\": 20000, \"test\": \"cpu\"}"},
    {"cpu", "stress-ng", "{\"workers\": 0, \"seconds\": \"1h\"}",
     "{\"workers\": 0, \"seconds\": 3600.0}"},
};

/* Checks that p holds every member of want: null, absent; a number
 * written with a point, a real of that value; anything else, equal. */
static void check_members(const char *what, const json_t *p, const json_t *want)
{
    const char *key;
    json_t *w;
    json_object_foreach((json_t *)want, key, w)
    {
        const json_t *got = json_object_get(p, key);
        bool ok = json_is_null(w) ? got == NULL
                  : json_is_real(w)
                      ? json_is_real(got) && json_real_value(got) == json_real_value(w)
                      : json_equal(got, w);
        CHECK_MSG(ok, "%s: %s", what, key);
    }
}

/* After check, a row of e is present exactly when it has a default or
 * was given. */
static void check_defaults_filled(const struct hv_engine_def *e, const json_t *given,
                                  const json_t *params)
{
    for (const struct hv_param_def *d = e->params_def; d->name != NULL; d++) {
        bool present = json_object_get(params, d->name) != NULL;
        bool want = d->def != NULL || json_object_get(given, d->name) != NULL;
        CHECK_MSG(present == want, "%s/%s: %s present %d", e->kind, e->engine, d->name, present);
    }
}

/* docs/catalog.md has a section "### `kind/engine`" naming every param of
 * the engine as "`name`". */
static void check_doc(const char *doc, const struct hv_engine_def *e)
{
    char heading[64];
    snprintf(heading, sizeof heading, "`%s/%s`", e->kind, e->engine);
    const char *s = strstr(doc, heading);
    while (s != NULL) {
        /* the heading line itself */
        const char *line = s;
        while (line > doc && line[-1] != '\n')
            line--;
        if (strncmp(line, "### ", 4) == 0)
            break;
        s = strstr(s + 1, heading);
    }
    CHECK_MSG(s != NULL, "docs/catalog.md has no section %s", heading);
    if (s == NULL)
        return;
    const char *end = strstr(s, "\n## ");
    const char *next = strstr(s, "\n### ");
    if (end == NULL || (next != NULL && next < end))
        end = next;
    size_t len = end ? (size_t)(end - s) : strlen(s);
    for (const struct hv_param_def *d = e->params_def; d->name != NULL; d++) {
        char want[64];
        snprintf(want, sizeof want, "| `%s` |", d->name);
        const char *hit = strstr(s, want);
        CHECK_MSG(hit != NULL && (size_t)(hit - s) < len,
                  "docs/catalog.md section %s has no row %s", heading, want);
    }
}

/* Checks the params of every workload of a plan file, once per value of
 * each sweep (one sweep at a time is enough to cover every value). */
static void check_example(const char *file)
{
    json_error_t jerr;
    json_t *plan = json_load_file(file, JSON_REJECT_DUPLICATES, &jerr);
    CHECK_MSG(plan != NULL, "%s: %s", file, jerr.text);
    size_t i;
    json_t *w;
    json_array_foreach(json_object_get(plan, "workloads"), i, w)
    {
        const char *engine = json_string_value(json_object_get(w, "engine"));
        const struct hv_engine_def *e =
            hv_engine_def_find(json_string_value(json_object_get(w, "kind")), engine);
        CHECK_MSG(e != NULL, "%s: /workloads/%zu: no engine %s", file, i, engine ? engine : "");
        if (e == NULL)
            continue;
        json_t *params = json_object_get(w, "params");
        /* The first value of every sweep, then each value of each sweep. */
        json_t *variant = json_deep_copy(params);
        const char *key;
        json_t *v;
        json_object_foreach(params, key, v)
        {
            if (json_is_array(v) && hv_engine_def_sweepable(e, key))
                json_object_set(variant, key, json_array_get(v, 0));
        }
        json_object_foreach(params, key, v)
        {
            if (!json_is_array(v) || !hv_engine_def_sweepable(e, key))
                continue;
            size_t k;
            json_t *value;
            json_array_foreach(v, k, value)
            {
                json_t *one = json_deep_copy(variant);
                json_object_set(one, key, value);
                json_t *errors = json_array();
                CHECK_MSG(hv_engine_def_check(e, one, BASE, errors) == 0, "%s: %s", file,
                          errors_text(errors));
                json_decref(errors);
                json_decref(one);
            }
        }
        json_t *errors = json_array();
        CHECK_MSG(hv_engine_def_check(e, variant, BASE, errors) == 0, "%s: %s", file,
                  errors_text(errors));
        json_decref(errors);
        json_decref(variant);
    }
    json_decref(plan);
}

int main(void)
{
    const size_t n = hv_engine_def_count();
    int problems;
    json_t *errors, *p;

    /* The table: unique engines, well-formed rows, sweeps name scalar rows. */
    /* every engine has a minimal case below */
    for (size_t i = 0; i < n; i++) {
        bool listed = false;
        for (size_t k = 0; k < sizeof minimal / sizeof minimal[0]; k++)
            listed |= hv_engine_def_find(minimal[k].kind, minimal[k].engine) == hv_engine_def_at(i);
        CHECK(listed);
    }
    for (size_t i = 0; i < n; i++) {
        const struct hv_engine_def *e = hv_engine_def_at(i);
        CHECK(hv_engine_def_find(e->kind, e->engine) == e);
        CHECK(e->params_def != NULL && e->summary != NULL);
        CHECK(e->external == (strcmp(e->engine, "builtin") != 0));
        bool has_peer = false;
        for (const struct hv_param_def *d = e->params_def; d->name != NULL; d++) {
            CHECK(d->description != NULL && d->description[0] != '\0');
            CHECK(strcmp(hv_param_type_name(d->type), "unknown") != 0);
            CHECK(!(d->required && d->def != NULL));
            CHECK((d->choices != NULL) == (d->type == HV_PARAM_ENUM || d->type == HV_PARAM_LIST));
            for (const struct hv_param_def *o = e->params_def; o < d; o++)
                CHECK(strcmp(o->name, d->name) != 0);
            has_peer |= strcmp(d->name, "peer") == 0 && d->type == HV_PARAM_TARGET && !d->required;
        }
        CHECK(has_peer == e->needs_peer);
        for (const char *const *s = e->sweepable; s != NULL && *s != NULL; s++) {
            const struct hv_param_def *d = e->params_def;
            while (d->name != NULL && strcmp(d->name, *s) != 0)
                d++;
            CHECK(d->name != NULL && d->type != HV_PARAM_LIST && d->type != HV_PARAM_BOOL);
        }
    }
    CHECK(hv_engine_def_at(n) == NULL);
    CHECK(hv_engine_def_find("cpu", NULL) == hv_engine_def_find("cpu", "builtin"));
    CHECK(hv_engine_def_find("gpu", "builtin") == NULL);
    CHECK(hv_engine_def_find("disk", "iozone") == NULL);
    CHECK(hv_engine_def_find(NULL, "fio") == NULL);
    CHECK(hv_engine_def_sweepable(hv_engine_def_find("net", "builtin"), "streams"));
    CHECK(!hv_engine_def_sweepable(hv_engine_def_find("net", "builtin"), "seconds"));
    CHECK(!hv_engine_def_sweepable(hv_engine_def_find("disk", "builtin"), "ops"));
    CHECK(hv_engine_def_sweepable(hv_engine_def_find("disk", "fio"), "iodepth"));
    CHECK(!hv_engine_def_sweepable(hv_engine_def_find("cpu", "builtin"), "copies"));
    CHECK(hv_engine_def_find("net", "builtin")->needs_peer);
    CHECK(!hv_engine_def_find("net", "custom")->needs_peer);

    /* Each engine accepts the least it needs, fills every default, and its
     * normalised params pass again unchanged (the server stores them). */
    for (size_t i = 0; i < sizeof minimal / sizeof minimal[0]; i++) {
        p = run(minimal[i].kind, minimal[i].engine, minimal[i].params, &problems, &errors);
        CHECK_MSG(problems == 0 && json_array_size(errors) == 0, "%s/%s: %s", minimal[i].kind,
                  minimal[i].engine, errors_text(errors));
        json_t *given = check_json(minimal[i].params);
        check_defaults_filled(hv_engine_def_find(minimal[i].kind, minimal[i].engine), given, p);
        json_decref(given);
        json_t *again = json_deep_copy(p), *errors2 = json_array();
        CHECK(hv_engine_def_check(hv_engine_def_find(minimal[i].kind, minimal[i].engine), again,
                                  BASE, errors2) == 0);
        CHECK(json_equal(again, p));
        json_decref(again);
        json_decref(errors2);
        json_decref(errors);
        json_decref(p);
    }

    /* Exact normalisation, engine by engine. */
    for (size_t i = 0; i < sizeof normalised / sizeof normalised[0]; i++) {
        char what[256];
        snprintf(what, sizeof what, "normalised %zu (%s/%s %s)", i, normalised[i].kind,
                 normalised[i].engine, normalised[i].params);
        p = run(normalised[i].kind, normalised[i].engine, normalised[i].params, &problems, &errors);
        CHECK_MSG(problems == 0, "%s: %s", what, errors_text(errors));
        json_t *want = check_json(normalised[i].want);
        check_members(what, p, want);
        json_decref(want);
        json_decref(p);
        json_decref(errors);
    }

    /* Refusals, each at its path with a message that says what to write. */
    CHECK(sizeof bad / sizeof bad[0] >= 30);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = run(bad[i].kind, bad[i].engine, bad[i].params, &problems, &errors);
        const char *msg = error_at(errors, bad[i].path);
        CHECK_MSG(problems > 0 && (size_t)problems == json_array_size(errors),
                  "bad %zu (%s/%s %s): %d problem(s), errors %s", i, bad[i].kind, bad[i].engine,
                  bad[i].params, problems, errors_text(errors));
        CHECK_MSG(msg != NULL && strstr(msg, bad[i].msg) != NULL,
                  "bad %zu (%s/%s %s): want \"%s\" at %s, got %s", i, bad[i].kind, bad[i].engine,
                  bad[i].params, bad[i].msg, bad[i].path, errors_text(errors));
        json_decref(p);
        json_decref(errors);
    }

    /* Every problem is reported at once. */
    p = run("disk", "builtin", "{\"block\": 3, \"qd\": 0, \"colour\": \"red\"}", &problems,
            &errors);
    CHECK(problems == 3 && error_at(errors, BASE "/block") && error_at(errors, BASE "/qd") &&
          error_at(errors, BASE "/colour"));
    json_decref(p);
    json_decref(errors);
    /* Not an object at all. */
    errors = json_array();
    p = json_array();
    CHECK(hv_engine_def_check(&hv_engine_def_cpu_builtin, p, BASE, errors) == 1);
    CHECK(error_at(errors, BASE) != NULL);
    json_decref(p);
    json_decref(errors);

    /* The API's view is built from the same rows. */
    json_t *list = hv_engines_json();
    CHECK(json_is_array(list) && json_array_size(list) == n);
    for (size_t i = 0; i < json_array_size(list); i++) {
        const struct hv_engine_def *e = hv_engine_def_at(i);
        json_t *o = json_array_get(list, i);
        CHECK_STR(json_string_value(json_object_get(o, "kind")), e->kind);
        CHECK_STR(json_string_value(json_object_get(o, "engine")), e->engine);
        CHECK(json_is_true(json_object_get(o, "needs_peer")) == e->needs_peer);
        json_t *params = json_object_get(o, "params");
        size_t k = 0;
        for (const struct hv_param_def *d = e->params_def; d->name != NULL; d++, k++) {
            json_t *row = json_array_get(params, k);
            CHECK_STR(json_string_value(json_object_get(row, "name")), d->name);
            CHECK_STR(json_string_value(json_object_get(row, "type")), hv_param_type_name(d->type));
            CHECK(json_is_true(json_object_get(row, "sweepable")) ==
                  hv_engine_def_sweepable(e, d->name));
            CHECK(json_is_true(json_object_get(row, "required")) ==
                  (d->required || (e->needs_peer && d->type == HV_PARAM_TARGET)));
            CHECK((json_object_get(row, "default") != NULL) == (d->def != NULL));
            CHECK_STR(json_string_value(json_object_get(row, "description")), d->description);
        }
        CHECK(json_array_size(params) == k);
    }
    /* the primary metrics, for every engine whose metric is not the
     * administrator's */
    for (size_t i = 0; i < json_array_size(list); i++) {
        const struct hv_engine_def *e = hv_engine_def_at(i);
        const json_t *m = json_object_get(json_array_get(list, i), "metrics");
        CHECK((m != NULL) == (e->metrics != NULL));
        CHECK((e->metrics == NULL) == (strcmp(e->engine, "custom") == 0));
        size_t k = 0;
        for (const char *const *s = e->metrics; s != NULL && *s != NULL; s++, k++)
            CHECK_STR(json_string_value(json_array_get(m, k)), *s);
        CHECK(json_array_size(m) == k);
    }
    /* a few values as a client sees them */
    size_t disk_at = 0;
    while (hv_engine_def_at(disk_at) != NULL &&
           hv_engine_def_at(disk_at) != hv_engine_def_find("disk", "builtin"))
        disk_at++;
    json_t *disk = json_array_get(list, disk_at);
    json_t *block = json_array_get(json_object_get(disk, "params"), 1);
    CHECK_STR(json_string_value(json_object_get(block, "name")), "block");
    CHECK_STR(json_string_value(json_object_get(block, "default")), "256k");
    CHECK(json_integer_value(json_object_get(block, "min")) == 512);
    CHECK(json_integer_value(json_object_get(block, "max")) == 64 * 1048576);
    CHECK(json_integer_value(json_object_get(block, "multiple_of")) == 512);
    CHECK_STR(json_string_value(json_object_get(block, "unit")), "bytes");
    json_t *copies = json_array_get(json_object_get(json_array_get(list, 0), "params"), 0);
    CHECK_STR(json_string_value(json_object_get(copies, "or")), "per-vcpu");
    CHECK(json_integer_value(json_object_get(copies, "default")) == 1);
    json_decref(list);

    /* Reading normalised params: "per-vcpu" is the target's CPUs within
     * the row's range, at least one. */
    p = run("cpu", "builtin", "{\"copies\": \"per-vcpu\"}", &problems, &errors);
    CHECK(hv_params_count(&hv_engine_def_cpu_builtin, p, "copies", 3) == 3);
    CHECK(hv_params_count(&hv_engine_def_cpu_builtin, p, "copies", 4096) == 1024);
    CHECK(hv_params_count(&hv_engine_def_cpu_builtin, p, "copies", 0) == 1);
    json_decref(p);
    json_decref(errors);
    p = run("cpu", "stress-ng", "{\"workers\": 0, \"stressor\": \"vm\"}", &problems, &errors);
    CHECK(hv_params_count(&hv_engine_def_cpu_stress_ng, p, "workers", 8) == 0);
    CHECK(hv_params_choice(&hv_engine_def_cpu_stress_ng, p, "stressor") == 2);
    CHECK(hv_params_choice(&hv_engine_def_cpu_stress_ng, p, "workers") == -1);
    CHECK(hv_params_int(p, "nothing") == 0 && hv_params_str(p, "nothing") == NULL);
    CHECK(hv_engine_def_param(&hv_engine_def_cpu_stress_ng, "seconds")->max == 86400);
    json_decref(p);
    json_decref(errors);
    /* The longest path open() takes, and not one character more. */
    char *path = malloc(4097);
    memset(path, 'p', 4096);
    path[0] = '/';
    path[4096] = '\0';
    json_t *pp = json_pack("{s:s}", "path", path);
    errors = json_array();
    CHECK(hv_engine_def_check(&hv_engine_def_disk_builtin, pp, BASE, errors) == 1);
    CHECK(error_at(errors, BASE "/path") != NULL &&
          strstr(error_at(errors, BASE "/path"), "at most 4095 characters") != NULL);
    json_decref(pp);
    json_decref(errors);
    path[4095] = '\0';
    pp = json_pack("{s:s}", "path", path);
    errors = json_array();
    CHECK(hv_engine_def_check(&hv_engine_def_disk_fio, pp, BASE, errors) == 1); /* rw only */
    CHECK(error_at(errors, BASE "/path") == NULL);
    json_decref(pp);
    json_decref(errors);
    free(path);

    /* docs/catalog.md documents every engine and every param. */
    char *doc = check_slurp("docs/catalog.md");
    CHECK(doc != NULL);
    for (size_t i = 0; doc != NULL && i < n; i++)
        check_doc(doc, hv_engine_def_at(i));
    free(doc);

    /* The examples' workloads are valid, every sweep value included. */
    glob_t g;
    CHECK(glob("examples/*.json", 0, NULL, &g) == 0 && g.gl_pathc >= 4);
    for (size_t i = 0; i < g.gl_pathc; i++)
        check_example(g.gl_pathv[i]);
    globfree(&g);

    return check_summary("test_params");
}
